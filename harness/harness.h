/*
 * harness/harness.h - the harness as a library, so tests can drive it in-process.
 */
#ifndef HARNESS_H
#define HARNESS_H

/* The whole CLI (docs/contract.md): parses argv, runs, writes results. Returns the process
 * exit status (0 ok, 1 a check failed, 2 bad usage or input, 3 setup failed).
 * Safe to call several times in one process (tests do). */
int stmbench_main(int argc, char **argv);
/* stmbench --line-transfer [--pin P] (harness/linexfer.c): the one-way time of a cache
 * line between the two PUs of a 2-thread run; the exit status of the program. */
int line_transfer_main(int argc, char **argv);
/* stmbench --log-floor [--threads N] [--pin P] [--work W] (harness/logfloor.c): appends
 * per second to one shared log at 1 and at N threads; the exit status. */
int log_floor_main(int argc, char **argv);

#endif
