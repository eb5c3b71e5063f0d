/*
 * runtime/htm/htm_cpu.c - CPUID flags and the RTM probe (htm_cpu.h). Compiled with
 * -mrtm (the Makefile), for _xbegin/_xend; they run only behind the CPUID check.
 *
 * Concurrency: the result is computed once under pthread_once, which orders its
 * writes before every caller's reads; afterwards it is read-only.
 */
#include "runtime/htm/htm_cpu.h"

#include <cpuid.h>
#include <immintrin.h>
#include <pthread.h>
#include <string.h>

enum { PROBE_ATTEMPTS = 256 };

static struct htm_cpu cpu;
static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

/* Tries PROBE_ATTEMPTS small transactions (one read-modify-write of a word that is
 * already in the cache); returns how many committed. Only called where CPUID.7:EBX[11]
 * says RTM exists. */
static int rtm_probe(void)
{
    static volatile int word;
    int commits = 0;
    word = 0;
    for (int i = 0; i < PROBE_ATTEMPTS; i++) {
        unsigned st = _xbegin();
        if (st == _XBEGIN_STARTED) {
            word = word + 1;
            _xend();
            commits++;
        }
    }
    return commits;
}

static void cpu_probe(void)
{
    unsigned a, b, c, d;
    memset(&cpu, 0, sizeof cpu);
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        cpu.fsgsbase = (b >> 0) & 1;
        cpu.hle = (b >> 4) & 1;
        cpu.rtm = (b >> 11) & 1;
        cpu.rtm_always_abort = (d >> 11) & 1;
    }
    if (__get_cpuid(1, &a, &b, &c, &d))
        cpu.hypervisor = (c >> 31) & 1;
    if (cpu.hypervisor) {
        /* The hypervisor leaves start at 0x40000000 (not checked by __get_cpuid,
         * which only knows the basic and extended ranges); only asked when CPUID.1
         * says a hypervisor is there, otherwise the leaf means nothing. */
        __cpuid(0x40000000u, a, b, c, d);
        memcpy(cpu.hypervisor_vendor + 0, &b, 4);
        memcpy(cpu.hypervisor_vendor + 4, &c, 4);
        memcpy(cpu.hypervisor_vendor + 8, &d, 4);
        cpu.hypervisor_vendor[12] = '\0';
        for (int i = 0; i < 12; i++)
            if (cpu.hypervisor_vendor[i] != '\0' &&
                (cpu.hypervisor_vendor[i] < 0x20 || cpu.hypervisor_vendor[i] > 0x7e))
                cpu.hypervisor_vendor[i] = '?';
    }
    if (cpu.rtm) {
        cpu.probe_attempts = PROBE_ATTEMPTS;
        cpu.probe_commits = rtm_probe();
        cpu.rtm_works = cpu.probe_commits * 2 >= cpu.probe_attempts;
    }
}

const struct htm_cpu *htm_cpu(void)
{
    pthread_once(&cpu_once, cpu_probe);
    return &cpu;
}
