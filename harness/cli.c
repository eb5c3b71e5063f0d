/* harness/cli.c - TEMPORARY placeholder (being written). */
#include "harness/harness.h"
#include <stdio.h>
int stmbench_main(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "not yet\n"); return 2; }
