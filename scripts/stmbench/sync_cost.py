"""stmbench sync-cost - what each runtime asks of the programmer, counted from the
workloads' sources (issue 33): per workload and runtime variant, the lines of
synchronisation code, the lock acquisition sites, the lock orderings to respect, the
retry loops and the atomic blocks.

    sync_cost.py [--root DIR] [--format md|csv] [--out FILE] [--details]

DIR (default: this checkout) must hold runtime/runtimes.h (the lists of runtimes and
workloads, read as the Makefile reads them) and workloads/. Only the Python standard
library. Exit status: 0, or 2 with a message on bad input (no lists, a missing file).

What is counted, per workload W and runtime R:

  Sources. The file R compiles: workloads/W.c for runtimes of build cc and gnutm,
  workloads/W_R.c for a runtime of build variant; plus every header of workloads/ or
  of a workload's folder such as workloads/interp/ (not workloads/lib/, and not
  workloads/workload.h, the harness's interface) it includes, transitively. So a workload that reuses another's structures counts their
  code too; "own file" counts the first file alone. Comments and string literals are
  blanked first.

  Synchronisation lines: lines holding a primitive of R's kind:
    mutex, gil, htm   SYNC_ATOMIC (the block), sync_inevitable;
    itm               the same and SYNC_TM_PURE (a function libitm must not instrument);
    stm               the same as mutex and SYNC_READ, SYNC_WRITE (this STM's barriers);
    a variant (locks) C11 atomics (atomic_* operations, fences and types, _Atomic), lock
                      types and the lock API (wl_spin_t, wl_spin_*, pthread_mutex_*),
                      the reclaimer (wl_qsbr_*), and calls of lock wrappers (below);
  and, for every runtime, lines that call a helper of the sources made of such lines
  alone (every statement line of its body is one), such as a lock wrapper. seq asks
  for nothing and has no row.

  Lock acquisition sites (variants): the lines that call a lock primitive
  (wl_spin_lock, pthread_mutex_lock) or a function or macro of the sources that returns
  holding a lock it took (an acquiring wrapper), outside the bodies of those wrappers.
  The runtimes with atomic blocks take their locks themselves: 0.

  Lock orderings to respect (variants): the distinct ordered pairs of lock classes
  (A, B) such that some path takes a lock of class B while it may hold one of class A
  (A = B: several locks of one class held at once, as accounts locked by index). A
  class is the struct type and member path of the lock (bank_laccount.lock,
  rbl_tree.wlock), from the declaration of the variable it is reached through, or
  from a cast. Found by walking each function's statements with the set of classes it
  may hold (branches joined, loop bodies walked to a fixed point, callees summarised),
  so it is conservative: a pair found may hold only on one branch. Two calls the
  syntax hides are followed: a name pasted in a macro's body (iv_##name##_decref(...),
  a parameter standing for any part) calls every function of the sources it can make,
  and a function named as a call's argument (a function pointer, an X-macro's case)
  is taken as called where it is passed.

  Retry loops: loops (for, while, do) that try again after a failed attempt: their
  header names a bound of tries (an identifier containing TRIES, tries, attempt or
  retry), or their header or body calls a compare-and-swap (atomic_compare_exchange_*)
  or a function whose name says it is an attempt (optimistic, snapshot, try_). The STM's
  and libitm's own retries are the runtime's, not the programmer's: not counted.

  Atomic blocks: SYNC_ATOMIC statements (runtimes with atomic blocks only).
"""

import argparse
import os
import re
import sys
from collections import OrderedDict


class InputError(Exception):
    pass


# ---------------------------------------------------------------- the lists

def read_lists(root):
    """(runtimes [(name, build)], workloads [name]) from runtime/runtimes.h, read as the
    Makefile reads them: the X(a, ...) lines of each #define."""
    path = os.path.join(root, "runtime", "runtimes.h")
    try:
        text = open(path).read()
    except OSError as e:
        raise InputError("%s: %s" % (path, e.strerror))
    lists = {}
    for name in ("SYNC_RUNTIMES", "SYNC_WORKLOADS"):
        m = re.search(r"^#define %s\(X, a\)(.*?)(?<!\\)\n" % name, text, re.M | re.S)
        if not m:
            raise InputError("%s: no #define %s(X, a)" % (path, name))
        lists[name] = [tuple(x.strip() for x in e.split(","))
                       for e in re.findall(r"X\(a,\s*([^)]*)\)", m.group(1))]
    rts = [(e[0], e[1]) for e in lists["SYNC_RUNTIMES"] if len(e) == 2]
    wls = [e[0] for e in lists["SYNC_WORKLOADS"]]
    if not rts or not wls:
        raise InputError("%s: empty lists of runtimes or workloads" % path)
    return rts, wls


# ---------------------------------------------------------------- C text

def strip_c(text):
    """The text with comments and the insides of string and character literals
    replaced by spaces (newlines kept, so offsets and line numbers stay)."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            for k in range(i, j):
                if out[k] != "\n":
                    out[k] = " "
            i = j
        elif c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            for k in range(i, j):
                out[k] = " "
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                if out[k] != "\n":
                    out[k] = " "
            i = j + 1
        else:
            i += 1
    return "".join(out)


def includes(raw):
    return re.findall(r'^\s*#\s*include\s+"([^"]+)"', raw, re.M)


TOKEN_RE = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|->|\+\+|--|&&|\|\||[<>=!]=|<<|>>|\S")


class Tok:
    __slots__ = ("s", "pos", "line")

    def __init__(self, s, pos, line):
        self.s, self.pos, self.line = s, pos, line


def tokenize(text, base=0, line0=1):
    toks, line, last = [], line0, 0
    for m in TOKEN_RE.finditer(text):
        line += text.count("\n", last, m.start())
        last = m.start()
        toks.append(Tok(m.group(), base + m.start(), line))
    return toks


# ---------------------------------------------------------------- units: functions, macros

class Unit:
    """A function body or a function-like macro's replacement, in one file."""

    def __init__(self, name, kind, path, toks, params, first_line, last_line):
        self.name, self.kind, self.path, self.toks = name, kind, path, toks
        self.params = params          # the text declaring its parameters (types)
        self.first_line, self.last_line = first_line, last_line
        self.stmts = None


def parse_units(path, stripped):
    """The functions (with their body tokens) and function-like macros of a file."""
    units = []
    # Macros: #define NAME(args) body, with continuation lines; blanked afterwards so the
    # brace scan below does not see their braces.
    text = list(stripped)
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)((?:[^\n]*\\\n)*[^\n]*)",
                         stripped, re.M):
        body = m.group(3).replace("\\\n", " \n")
        line = stripped.count("\n", 0, m.start()) + 1
        toks = pasted(tokenize(body + " ;", m.start(3), stripped.count("\n", 0, m.start(3)) + 1),
                      {a.strip() for a in m.group(2).split(",")})
        units.append(Unit(m.group(1), "macro", path, toks, m.group(2), line,
                          stripped.count("\n", 0, m.end()) + 1))
    for m in re.finditer(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", stripped, re.M):
        for k in range(m.start(), m.end()):
            if text[k] != "\n":
                text[k] = " "
    text = "".join(text)
    toks = tokenize(text)
    depth, start = 0, 0
    i = 0
    while i < len(toks):
        t = toks[i].s
        if t == "{" and depth == 0:
            head = toks[start:i]
            j = find_close(toks, i)
            hs = [x.s for x in head]
            if hs and hs[-1] == ")" and "=" not in hs:
                # the parameter list: the last parenthesised group of the head
                k = len(hs) - 1
                d = 0
                while k >= 0:
                    d += hs[k] == ")"
                    d -= hs[k] == "("
                    if d == 0:
                        break
                    k -= 1
                if k > 0 and re.match(r"[A-Za-z_]\w*$", hs[k - 1]):
                    params = " ".join(hs[k:])
                    units.append(Unit(hs[k - 1], "function", path, toks[i:j + 1], params,
                                      head[0].line, toks[j].line))
            i = j + 1
            start = i
            continue
        if t == ";" and depth == 0:
            start = i + 1
        i += 1
    return units


PASTE = "paste:"


def pasted(toks, params):
    """A macro body's tokens with each name pasted together (iv_##name##_decref) made
    one token, PASTE + the regular expression of the names it can make (a parameter
    of the macro stands for any name part)."""
    out, i = [], 0
    while i < len(toks):
        if re.match(r"[A-Za-z_]\w*$", toks[i].s) and i + 3 < len(toks) and \
                toks[i + 1].s == "#" and toks[i + 2].s == "#":
            parts, j = [toks[i].s], i
            while j + 3 < len(toks) and toks[j + 1].s == "#" and toks[j + 2].s == "#" and \
                    re.match(r"\w+$", toks[j + 3].s):
                parts.append(toks[j + 3].s)
                j += 3
            rx = "".join(r"\w+" if p in params else re.escape(p) for p in parts)
            out.append(Tok(PASTE + rx, toks[i].pos, toks[i].line))
            i = j + 1
            continue
        out.append(toks[i])
        i += 1
    return out


def find_close(toks, i):
    """Index of the bracket closing toks[i] ( ( [ or { )."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    opener, closer = toks[i].s, pairs[toks[i].s]
    d = 0
    for j in range(i, len(toks)):
        if toks[j].s == opener:
            d += 1
        elif toks[j].s == closer:
            d -= 1
            if d == 0:
                return j
    return len(toks) - 1


# ---------------------------------------------------------------- statements

class Stmt:
    __slots__ = ("kind", "toks", "subs", "head")

    def __init__(self, kind, toks=(), subs=(), head=()):
        self.kind, self.toks, self.subs, self.head = kind, list(toks), list(subs), list(head)


def parse_stmts(toks, i, end):
    """Statements of toks[i:end]."""
    out = []
    while i < end:
        s, i = parse_stmt(toks, i, end)
        if s is not None:
            out.append(s)
    return out


def skip_expr(toks, i, end, stop=";"):
    """Index just past the token `stop` at bracket depth 0 (or end)."""
    while i < end:
        t = toks[i].s
        if t in "([{":
            i = find_close(toks, i) + 1
            continue
        i += 1
        if t == stop:
            return i
    return end


def parse_stmt(toks, i, end):
    t = toks[i].s
    if t == "{":
        j = find_close(toks, i)
        return Stmt("block", subs=parse_stmts(toks, i + 1, j)), j + 1
    if t == ";":
        return None, i + 1
    if t in ("if", "while", "for", "switch") and i + 1 < end and toks[i + 1].s == "(":
        j = find_close(toks, i + 1)
        head = toks[i:j + 1]
        body, k = parse_stmt(toks, j + 1, end)
        subs = [body] if body else []
        if t == "if" and k < end and toks[k].s == "else":
            other, k = parse_stmt(toks, k + 1, end)
            subs.append(other if other else Stmt("block"))
            return Stmt("if", head=head, subs=subs), k
        kind = {"if": "if", "while": "loop", "for": "loop", "switch": "switch"}[t]
        return Stmt(kind, head=head, subs=subs), k
    if t == "do":
        body, k = parse_stmt(toks, i + 1, end)
        if k < end and toks[k].s == "while":
            k2 = skip_expr(toks, k, end)
            return Stmt("loop", head=toks[k:k2], subs=[body] if body else []), k2
        return Stmt("loop", subs=[body] if body else []), k
    if t in ("case", "default"):
        return Stmt("label", toks=toks[i:skip_expr(toks, i, end, ":")]), skip_expr(toks, i, end, ":")
    if re.match(r"[A-Za-z_]\w*$", t) and i + 1 < end and toks[i + 1].s == ":":
        return Stmt("label", toks=toks[i:i + 2]), i + 2
    # A macro with a block: NAME(args) { ... }  (SYNC_ATOMIC)
    if re.match(r"[A-Za-z_]\w*$", t) and i + 1 < end and toks[i + 1].s == "(":
        j = find_close(toks, i + 1)
        if j + 1 < end and toks[j + 1].s == "{":
            body, k = parse_stmt(toks, j + 1, end)
            return Stmt("blockmacro", head=toks[i:j + 1], subs=[body]), k
    k = skip_expr(toks, i, end)
    return Stmt("simple", toks=toks[i:k]), k


def unit_stmts(u):
    if u.stmts is None:
        if u.kind == "function":
            u.stmts = parse_stmts(u.toks, 1, len(u.toks) - 1)
        else:
            u.stmts = parse_stmts(u.toks, 0, len(u.toks))
    return u.stmts


def stmt_tokens(s):
    """Every token of a statement, in order (head, own tokens, sub-statements)."""
    out = list(s.head) + list(s.toks)
    for x in s.subs:
        out += stmt_tokens(x)
    return out


def calls(toks):
    """(name, index of the name, index of its closing paren) of the calls in toks."""
    out = []
    for i in range(len(toks) - 1):
        if toks[i + 1].s == "(" and (re.match(r"[A-Za-z_]\w*$", toks[i].s) or
                                      toks[i].s.startswith(PASTE)) and \
                toks[i].s not in ("if", "for", "while", "switch", "return", "sizeof",
                                  "_Alignof", "__attribute__"):
            out.append((toks[i].s, i, find_close(toks, i + 1)))
    return out


# ---------------------------------------------------------------- the runtimes' primitives

ACQUIRE = {"wl_spin_lock", "wl_spin_lock_at", "pthread_mutex_lock", "pthread_spin_lock"}
RELEASE = {"wl_spin_unlock", "pthread_mutex_unlock", "pthread_spin_unlock"}
LOCKISH = re.compile(r"^(wl_spin_\w+|pthread_mutex_\w+|pthread_spin_\w+|wl_qsbr_\w+)$")
ATOMIC_CALL = re.compile(r"^atomic_\w+$")
ATOMIC_TYPE = re.compile(r"^(_Atomic|atomic_(bool|char|schar|uchar|short|ushort|int|uint|long|"
                         r"ulong|llong|ullong|\w+_t)|wl_spin_t|pthread_mutex_t|pthread_spinlock_t)$")
BLOCK = {"SYNC_ATOMIC"}
BARRIER = {"SYNC_READ", "SYNC_WRITE"}

# token classes per kind of runtime: which tokens make a line synchronisation code
KINDS = {
    "block": lambda tok, nxt: tok in BLOCK or tok == "sync_inevitable",
    "itm": lambda tok, nxt: tok in BLOCK or tok == "sync_inevitable" or tok == "SYNC_TM_PURE",
    "stm": lambda tok, nxt: tok in BLOCK or tok in BARRIER or tok == "sync_inevitable",
    "locks": lambda tok, nxt: (nxt == "(" and (ATOMIC_CALL.match(tok) or LOCKISH.match(tok)))
    or ATOMIC_TYPE.match(tok) is not None,
}
RETRY_HEAD = re.compile(r"TRIES|tries|attempt|retry", re.I)
RETRY_CALL = re.compile(r"atomic_compare_exchange|optimistic|snapshot|try_")


def runtime_kind(name, build):
    if build == "variant":
        return "locks"
    if build == "gnutm":
        return "itm"
    return "stm" if name == "stm" else "block"


# ---------------------------------------------------------------- one variant

SKIP_MARK = "sync_cost: not counted"


def skip_marked(raw_lines, first_line):
    """Whether the comment right above line first_line (1-based) carries SKIP_MARK: code
    that is not part of the program (a test's deliberately broken mode)."""
    text, ln = [], first_line - 2
    while ln >= 0 and re.match(r"\s*(/\*|\*|//)", raw_lines[ln]):
        text.insert(0, raw_lines[ln])
        ln -= 1
    return SKIP_MARK in re.sub(r"\s*\n\s*\*?\s*", " ", "\n".join(text))


class Variant:
    """A workload's sources as one runtime compiles them, and their units."""

    def __init__(self, root, main):
        self.root = root
        self.main = main
        self.files = []                   # relative paths, main first
        self.raw, self.stripped = {}, {}
        self._collect(main)
        self.units = OrderedDict()        # name -> Unit; the main file's definitions win
        self.skipped = set()              # (file, line) of the units marked not counted
        self.signatures = set()           # (file, line) of the units' signatures
        for f in self.files:
            raw = self.raw[f].split("\n")
            for u in parse_units(f, self.stripped[f]):
                # the lines of its signature (or #define), up to its body's first token
                self.signatures |= {(f, ln) for ln in range(u.first_line, u.toks[0].line + 1)} \
                    if u.kind == "function" else {(f, u.first_line)}
                if skip_marked(raw, u.first_line):
                    self.skipped |= {(f, ln) for ln in range(u.first_line, u.last_line + 1)}
                elif u.name not in self.units:
                    self.units[u.name] = u

    def tokens(self, rel):
        """The file's tokens outside the units marked not counted."""
        return [t for t in tokenize(self.stripped[rel]) if (rel, t.line) not in self.skipped]

    def _collect(self, rel):
        if rel in self.raw:
            return
        path = os.path.join(self.root, rel)
        try:
            raw = open(path).read()
        except OSError as e:
            raise InputError("%s: %s" % (path, e.strerror))
        self.files.append(rel)
        self.raw[rel] = raw
        self.stripped[rel] = strip_c(raw)
        for inc in includes(raw):
            # workloads/*.h and a workload's own folder (workloads/interp/), not lib/
            if re.match(r"workloads/(?!lib/)([^/]+/)?[^/]+\.h$", inc) and \
                    inc != "workloads/workload.h" and \
                    os.path.exists(os.path.join(self.root, inc)):
                self._collect(inc)

    def lines(self, rel):
        return self.stripped[rel].split("\n")


def token_lines(variant, kind):
    """{(file, line)} of the lines holding a primitive of the kind."""
    pred = KINDS[kind]
    out = set()
    for f in variant.files:
        toks = variant.tokens(f)
        for i, t in enumerate(toks):
            nxt = toks[i + 1].s if i + 1 < len(toks) else ""
            if pred(t.s, nxt):
                out.add((f, t.line))
    return out


def sync_lines(variant, kind, lockwalk=None):
    """The synchronisation lines: primitives, calls of lock wrappers (lockwalk), and
    calls of helpers made of such lines alone."""
    lines = token_lines(variant, kind)

    def add_calls(names):
        for f in variant.files:
            toks = variant.tokens(f)
            for i in range(len(toks) - 1):
                if toks[i].s in names and toks[i + 1].s == "(" and \
                        (f, toks[i].line) not in variant.signatures:
                    lines.add((f, toks[i].line))
    if lockwalk:
        add_calls({n for n, k in lockwalk.kind.items() if k})
    helpers = set()
    changed = True
    while changed:                    # a helper may be made of calls of helpers
        changed = False
        for u in variant.units.values():
            if u.name in helpers or u.kind != "function":
                continue
            body = {t.line for t in u.toks[1:-1] if t.s not in "{}"}
            if body and all((u.path, ln) in lines for ln in body):
                helpers.add(u.name)
                changed = True
                add_calls({u.name})
    return lines, helpers


# ---------------------------------------------------------------- locks: classes and walks

def first_arg(toks):
    """The tokens of a call's first argument (up to its first comma outside brackets):
    the lock; wl_spin_lock_at's others name its object and site."""
    depth = 0
    for k, t in enumerate(toks):
        if t.s in "([{":
            depth += 1
        elif t.s in ")]}":
            depth -= 1
        elif t.s == "," and depth == 0:
            return toks[:k]
    return toks


def lock_class(unit, arg_toks):
    """The class of the lock an expression (the argument of a lock call) names."""
    s = "".join(t.s for t in arg_toks)
    s = re.sub(r"\[[^\]]*\]", "", s)
    cast = re.match(r"^&?\(*\(structs?(\w+)\*\)([\w>.\-]*?)\)?->(\w+)$",
                    s.replace("struct", "structs"))
    if cast:
        return "%s.%s" % (cast.group(1), cast.group(3))
    s = s.lstrip("&").strip("()")
    parts = re.split(r"->|\.", s)
    base, path = parts[0], ".".join(parts[1:])
    decl = " ".join(t.s for t in unit.toks) + " " + (unit.params or "")
    m = re.search(r"struct (\w+) (?:\* )+(?:const )?%s\b" % re.escape(base), unit.params or "") or \
        re.search(r"struct (\w+) (?:\* )+(?:const )?%s\b" % re.escape(base), decl)
    if m:
        return "%s.%s" % (m.group(1), path) if path else m.group(1)
    return s


class Summary:
    __slots__ = ("acquires", "out", "releases")

    def __init__(self):
        self.acquires, self.out, self.releases = set(), {}, set()

    def key(self):
        return (frozenset(self.acquires), frozenset(self.out.items()), frozenset(self.releases))


class LockWalk:
    """May-hold analysis of a variant's lock calls (see the top of the file).

    A unit that takes a lock and releases none (bank_lock, bank_lock_all, IV_LOCK) is
    an acquiring wrapper: a call of it takes its locks and returns holding them. One
    that releases and takes none is a releasing wrapper. Any other unit is taken to
    return holding what it held when called (its locks are its own business)."""

    def __init__(self, variant):
        self.v = variant
        self.sum = {name: Summary() for name in variant.units}
        self.kind = {name: "" for name in variant.units}
        for _ in range(12):           # summaries to a fixed point
            before = {k: (s.key(), self.kind[k]) for k, s in self.sum.items()}
            self.pairs, self.sites = set(), set()
            for u in variant.units.values():
                self.sum[u.name] = self.walk_unit(u)
            if {k: (s.key(), self.kind[k]) for k, s in self.sum.items()} == before:
                break

    def wrapper(self, name):
        return self.kind.get(name) == "acquire"

    def walk_unit(self, u):
        self.cur = u
        self.acc = Summary()
        self.took = self.gave = False
        held = self.walk(unit_stmts(u), {})
        self.kind[u.name] = "acquire" if self.took and not self.gave else \
            "release" if self.gave and not self.took else ""
        if self.kind[u.name] == "acquire":
            self.acc.out = {k: v for k, v in held.items() if v > 0}
        if self.kind[u.name] != "release":
            self.acc.releases = set()
        return self.acc

    @staticmethod
    def join(a, b):
        out = dict(a)
        for k, v in b.items():
            out[k] = max(out.get(k, 0), v)
        return out

    def walk(self, stmts, held):
        for s in stmts:
            held = self.walk_one(s, held)
        return held

    def walk_one(self, s, held):
        if s.kind == "block":
            return self.walk(s.subs, held)
        if s.kind == "if":
            held = self.events(s.head, held)
            a = self.walk_one(s.subs[0], held) if s.subs else held
            b = self.walk_one(s.subs[1], held) if len(s.subs) > 1 else held
            return self.join(a, b)
        if s.kind == "loop":
            # One iteration from the entry state, then one more from what the first
            # left: a lock a second iteration takes while the first's is held makes a
            # pair. At the exit, a class the body releases is released (a loop that
            # unlocks a list), one it takes is held (a loop that locks a list).
            held = self.events(s.head, held)
            first = self.walk(s.subs, held)
            second = self.walk(s.subs, self.join(held, first))
            out = dict(held)
            for c in set(held) | set(first):
                h, f = held.get(c, 0), first.get(c, 0)
                out[c] = 0 if f < h else min(2, max(f, second.get(c, 0))) if f > h else h
            return out
        if s.kind in ("switch", "blockmacro"):
            held = self.events(s.head, held)
            return self.walk(s.subs, held)
        return self.events(s.toks, held)

    def release(self, held, cls):
        self.gave = True
        if held.get(cls, 0) > 0:
            held[cls] -= 1
        else:
            self.acc.releases.add(cls)

    def callees(self, toks):
        """The calls of toks as (name, i, j), with two kinds the syntax hides: a pasted
        name (a macro's iv_##name##_decref(...)) calls every unit whose name it can
        make; a unit named as an argument (a function pointer, an X-macro's case) is
        taken as called where it is passed."""
        out = []
        for name, i, j in calls(toks):
            if name.startswith(PASTE):
                rx = re.compile(name[len(PASTE):] + "$")
                out += [(n, i, j) for n in self.sum if rx.match(n)]
                continue
            out.append((name, i, j))
            for k in range(i + 2, j):
                if toks[k].s in self.sum and toks[k].s != name and \
                        (k + 1 >= len(toks) or toks[k + 1].s != "("):
                    out.append((toks[k].s, k, k))
        return out

    def events(self, toks, held):
        held = dict(held)
        for name, i, j in self.callees(toks):
            line = toks[i].line
            if name in ACQUIRE:
                cls = lock_class(self.cur, first_arg(toks[i + 2:j]))
                self.take(held, {cls}, line, name)
                held[cls] = held.get(cls, 0) + 1
            elif name in RELEASE:
                self.release(held, lock_class(self.cur, first_arg(toks[i + 2:j])))
            elif name in self.sum and name != self.cur.name:
                f = self.sum[name]
                if f.acquires:
                    self.take(held, f.acquires, line, name)
                if self.kind[name] == "release":
                    for cls in f.releases:
                        self.release(held, cls)
                for cls, n in f.out.items():
                    held[cls] = held.get(cls, 0) + n
        return held

    def take(self, held, classes, line, callee):
        self.acc.acquires |= classes
        for h, n in held.items():
            if n > 0:
                for c in classes:
                    self.pairs.add((h, c))
        if callee in ACQUIRE or self.wrapper(callee):
            self.took = True
            self.sites.add((self.cur.path, line, self.cur.name))

    def acquisition_sites(self):
        """Sites outside the bodies of acquiring wrappers."""
        return {(f, ln) for f, ln, unit in self.sites if not self.wrapper(unit)}


def retry_loops(variant):
    n = 0

    def visit(stmts):
        nonlocal n
        for s in stmts:
            if s.kind == "loop":
                head = " ".join(t.s for t in s.head)
                body = [name for name, _, _ in calls(stmt_tokens(s))]
                if RETRY_HEAD.search(head) or any(RETRY_CALL.search(b) for b in body):
                    n += 1
            visit(s.subs)
    for u in variant.units.values():
        if u.kind == "function":
            visit(unit_stmts(u))
    return n


def atomic_blocks(variant):
    n = 0
    for f in variant.files:
        toks = variant.tokens(f)
        n += sum(1 for i, t in enumerate(toks[:-1]) if t.s in BLOCK and toks[i + 1].s == "(")
    return n


# ---------------------------------------------------------------- the table

COLUMNS = ["workload", "runtimes", "sync_lines", "sync_lines_own", "lock_sites",
           "lock_orderings", "retry_loops", "atomic_blocks", "files"]


def measure(root):
    rts, wls = read_lists(root)
    rows, details = [], []
    for w in wls:
        groups = OrderedDict()        # counts -> runtimes, in the list's order
        for name, build in rts:
            if name == "seq":
                continue
            main = "workloads/%s_%s.c" % (w, name) if build == "variant" else "workloads/%s.c" % w
            if not os.path.exists(os.path.join(root, main)):
                continue
            v = Variant(root, main)
            kind = runtime_kind(name, build)
            lw = LockWalk(v) if kind == "locks" else None
            lines, helpers = sync_lines(v, kind, lw)
            own = {x for x in lines if os.path.basename(x[0]).startswith(w) or
                   x[0].startswith("workloads/%s/" % w)}
            if lw:
                sites, pairs = lw.acquisition_sites(), sorted(lw.pairs)
                retries, blocks = retry_loops(v), 0
            else:
                sites, pairs, retries, blocks = set(), [], retry_loops(v), atomic_blocks(v)
            key = (len(lines), len(own), len(sites), len(pairs), retries, blocks,
                   " ".join(v.files))
            if key not in groups:
                groups[key] = []
                details.append((w, key, pairs, sorted(helpers)))
            groups[key].append(name)
        for key, names in groups.items():
            rows.append(dict(zip(COLUMNS, [w, " ".join(names)] + list(key))))
    return rows, details


def format_md(rows, details, show_details):
    out = ["| workload | runtimes | sync lines (own files) | lock acquisition sites | "
           "lock orderings | retry loops | atomic blocks |",
           "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append("| %s | %s | %d (%d) | %d | %d | %d | %d |" % (
            r["workload"], ", ".join(r["runtimes"].split()), r["sync_lines"],
            r["sync_lines_own"], r["lock_sites"], r["lock_orderings"], r["retry_loops"],
            r["atomic_blocks"]))
    if show_details:
        out += ["", "The lock orderings (A before B):", ""]
        for (w, key, pairs, helpers), r in zip(details, rows):
            if pairs:
                out.append("- %s (%s): %s." % (w, ", ".join(r["runtimes"].split()),
                                                "; ".join("%s before %s" % p for p in pairs)))
        out += ["", "The sources counted (the first is the file the runtime compiles; own "
                "files: those named after the workload):", ""]
        for (w, key, pairs, helpers), r in zip(details, rows):
            out.append("- %s (%s): %s." % (w, ", ".join(r["runtimes"].split()),
                                            ", ".join(key[6].split())))
    return "\n".join(out) + "\n"


def format_csv(rows):
    out = [",".join(COLUMNS)]
    for r in rows:
        out.append(",".join(str(r[c]) for c in COLUMNS))
    return "\n".join(out) + "\n"


def main(argv):
    from .lists import ROOT
    ap = argparse.ArgumentParser(prog=argv[0], description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=ROOT)
    ap.add_argument("--format", choices=("md", "csv"), default="md")
    ap.add_argument("--out")
    ap.add_argument("--details", action="store_true",
                    help="md: list each row's lock orderings and sources under the table")
    a = ap.parse_args(argv[1:])
    try:
        rows, details = measure(a.root)
    except InputError as e:
        sys.stderr.write("sync_cost: %s\n" % e)
        return 2
    text = format_md(rows, details, a.details) if a.format == "md" else format_csv(rows)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0
