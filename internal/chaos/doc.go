// Package chaos kills Strata's manager with SIGKILL at random points while it works, on a real
// control plane with the upstream controllers (internal/upstream), and checks what must hold
// whatever the moment of the crash: the children converge to what an uninterrupted run makes,
// nothing leaks, and above all no data is destroyed by mistake. Some of Strata's steps destroy
// data by design — a local volume's wipe, the Delete policy, a retained Kafka cluster's re-creation
// under its old cluster ID — and a crash between two of their writes is where an operator loses
// data.
//
// The checks on data are made after the fact, from a record of every change the API server
// reported for volumes, claims, cleanup pods and Kafka clusters, replayed in the order of their
// resourceVersions (one etcd revision for every kind, so the order is the order the writes
// happened in, across kinds). Replay (replay.go) is pure and table-tested; Recorder (record.go)
// collects the events; Monkey (monkey.go) kills and restarts the manager; the scenarios are in
// chaos_test.go. `make chaos` runs them with at least 200 kills; `make test` with a few.
//
// standby_test.go runs two manager replicas with leader election, each behind a Proxy that
// records its writes, kills or freezes the leader, measures the failover and checks that no
// replica wrote outside its tenure as leader (tenure.go); `make standby`, docs/standby.md.
//
// The API server's own faults use the same lives and checks (apiserver_test.go, `make
// chaos-api`): APIFault (apifault.go) restarts kube-apiserver mid-reconcile, drained or killed,
// and can compact etcd first so that every watch expires and every informer lists again; then
// another field manager changes a field Strata owns.
package chaos
