#!/usr/bin/env bash
# tests/test_commit_subjects.sh [BUILD] - commit subjects of at most 72 characters (the
# rest of a message goes in its body), for every commit made since the one that added
# this test (by commit time); and the hook that checks it before a commit (.githooks/commit-msg) refuses a
# longer subject and accepts a short one. Outside a git checkout: nothing to check.
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/checks.sh      # $tmp, check, checks_summary

subjects() {
    git rev-parse --git-dir >/dev/null 2>&1 || return 0
    local since
    since=$(git log --diff-filter=A --format=%H -- tests/test_commit_subjects.sh | tail -n 1)
    [ -n "$since" ] || return 0                # not committed yet: nothing after it
    # commits made after it, on main or on a branch merged since (an older branch's
    # commits keep their subjects)
    local t
    t=$(git log -1 --format=%ct "$since")
    git log --no-merges --format='%ct %s' HEAD | awk -v t="$t" '$1 >= t' | cut -d' ' -f2- | awk '
        length($0) > 72 { printf "  %d characters: %s\n", length($0), $0; bad = 1 }
        END { exit bad }'
}
check "commit subjects since this test are at most 72 characters" subjects

hook() {
    printf '%s\n\nbody\n' "a subject of fifty characters or so, well below it" >"$tmp/ok"
    printf '%s\n' "$(printf 'x%.0s' $(seq 1 73))" >"$tmp/long"
    printf '# a comment line first\n%s\n' "short" >"$tmp/comment"
    .githooks/commit-msg "$tmp/ok" && .githooks/commit-msg "$tmp/comment" &&
        ! .githooks/commit-msg "$tmp/long" 2>/dev/null
}
check "the commit-msg hook refuses a 73-character subject, accepts short ones" hook

checks_summary
