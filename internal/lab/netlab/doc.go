// Package netlab gives the lab's processes network links that behave like the ones the plan
// models: each host (a broker, a producer, the job) in its own network namespace, all joined by
// a bridge in a hub namespace, each link shaped in both directions with tc's token bucket filter.
// On loopback every process shares one link of many GB/s, so a broker's link can never
// saturate, and the bandwidth model (docs/planning.md) could only be checked against itself.
//
// The per-host byte counters are the kernel's counters of the host's interface, the same ones
// cAdvisor reports as container_network_{receive,transmit}_bytes_total for a pod.
//
// It needs root (network namespaces, veth pairs, qdiscs) and the ip and tc commands (iproute2);
// without them New skips the test with a message saying what was not checked. Traffic stays
// inside the namespaces a test creates, on addresses of a private subnet no other host uses.
package netlab
