/* mobilenet_v2.c — MobileNet v2 (batch 1, fp32, 224x224, width 1.0, seeded weights) from topi
 * templates (the model: examples/net/models.c; the network library: include/tec/net.h): per-layer
 * time, total and the top-5 classes. Its int8 twin: include/tec/qnet.h, `bench/run net --net
 * mobilenet_v2 --dtype int8`.
 *   mobilenet_v2 [iters [size [width]]] */
#include "net/example_main.h"

int main(int argc, char **argv) { return net_example_main(NET_MOBILENET_V2, argc, argv); }
