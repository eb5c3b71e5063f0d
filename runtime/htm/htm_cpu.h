/*
 * runtime/htm/htm_cpu.h - what the CPU says about itself (CPUID) and whether RTM
 * transactions actually commit on it (a probe). Used by the htm runtime (which
 * refuses to start without working RTM) and by the context JSON of the results.
 */
#ifndef HTM_CPU_H
#define HTM_CPU_H

struct htm_cpu {
    int rtm;                  /* CPUID.(EAX=7,ECX=0):EBX[11] */
    int hle;                  /* CPUID.(EAX=7,ECX=0):EBX[4] */
    int fsgsbase;             /* CPUID.(EAX=7,ECX=0):EBX[0] (the CPU's; the kernel may
                                 still not allow the instructions: AT_HWCAP2) */
    int rtm_always_abort;     /* CPUID.(EAX=7,ECX=0):EDX[11]: xbegin always aborts */
    int hypervisor;           /* CPUID.1:ECX[31]: running under a hypervisor */
    char hypervisor_vendor[13]; /* CPUID.0x40000000 EBX,ECX,EDX ("KVMKVMKVM", ...), or "" */
    int probe_attempts;       /* RTM probe: transactions tried (0: not run, no RTM) */
    int probe_commits;        /* ... and committed */
    int rtm_works;            /* rtm and at least half of the probe committed */
};

/* The CPU's flags and the RTM probe, computed once per process (thread-safe). The
 * probe executes xbegin only where CPUID reports RTM (elsewhere it would fault). */
const struct htm_cpu *htm_cpu(void);

#endif
