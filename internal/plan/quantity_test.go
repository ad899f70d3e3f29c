package plan_test

import (
	"k8s.io/apimachinery/pkg/api/resource"
)

// q and qp keep the tests' quantities short; the fixtures themselves are internal/testutil/gen's.
func q(s string) resource.Quantity { return resource.MustParse(s) }

func qp(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
