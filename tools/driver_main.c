/* driver_main.c — main of a generator program (libtec_driver.a): the `tec` verbs, with the
 * program's TEC_GENERATOR operators beside the topi templates. */
#include "tec/driver.h"

int main(int argc, char **argv) { return tec_driver_main(argc, argv); }
