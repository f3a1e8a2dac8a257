/* tec.c — the `tec` command: targets, list, print, compile, bench and tune for the topi
 * templates (tools/driver.c has the verbs; a generator program links the same driver). */
#include "tec/driver.h"

int main(int argc, char **argv) { return tec_driver_main(argc, argv); }
