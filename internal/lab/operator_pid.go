package lab

// Pid is the operator process's id while it runs (0 before it started): the scale benchmark
// reads its resident set and CPU time from /proc/PID.
func (o *Operator) Pid() int {
	if o.proc == nil {
		return 0
	}
	return o.proc.Pid()
}
