/* harness/main.c - the stmbench binary: everything is in stmbench_main (harness/cli.c). */
#include "harness/harness.h"

int main(int argc, char **argv)
{
    return stmbench_main(argc, argv);
}
