/* resnet18.c — ResNet-18 (batch 1, fp32, 224x224, seeded weights) from topi templates (the
 * model: examples/net/models.c; the network library: include/tec/net.h): per-layer time, total
 * and the top-5 classes.
 *   resnet18 [iters [size [width]]] */
#include "net/example_main.h"

int main(int argc, char **argv) { return net_example_main(NET_RESNET18, argc, argv); }
