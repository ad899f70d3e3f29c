// Package localport picks loopback ports for processes started beside the operator's tests and
// `make run` (kube-apiserver, etcd, Kafka brokers, exporters), which bind them themselves some
// time after the port was chosen.
//
// A port the kernel picks for a listen on port 0 is one of its ephemeral range
// (net.ipv4.ip_local_port_range), the range every outgoing connection of every process on the
// machine takes its local port from. Released and bound again later by the process started, it
// could meanwhile be taken by any connection, and the process then fails to start: a lab broker
// did once ("Socket server failed to bind to 127.0.0.1:38939: Address already in use") while
// `make test`'s packages and other builds ran beside it. envtest's own choice of kube-apiserver's
// and etcd's ports (controller-runtime's addr.Suggest) listens on port 0 too. So the ports are
// chosen at random below that range, where no connection is given one and only another listener
// can take it. It has no test dependency, so the control plane of `make run` uses it as well.
package localport
