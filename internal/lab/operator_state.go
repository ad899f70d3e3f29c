package lab

// Running says whether the operator's process runs: a test that cuts the manager off from its
// API server (internal/chaos) plays the kubelet, which starts a container again when it exits.
func (o *Operator) Running() bool { return o.proc != nil && o.proc.Running() }
