// Package envtestutil is what the envtest tests of controllers/pipeline, controllers/tier and
// controllers/autoscaling share: a control plane with Strata's controllers running against it
// (Operator, StartOperator), the manager's every finished reconcile (History) and API write
// (counting.go), so that a test waits on the reconcile that saw its change instead of
// sleeping, the samples, and -short's one kept test (SkipUnderShort). It is built only into
// those tests.
package envtestutil
