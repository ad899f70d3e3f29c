package plan

import (
	"math"
	"math/big"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Units and exact arithmetic shared by the models.
//
// Quantities in the spec (link speeds, tier bandwidths, sizes) have no upper bound and may be
// fractional ("1.5G"), so every formula that combines them runs on big.Rat and only the final,
// reported figures are floored into int64 (saturating, never wrapping). Counts are compared
// against their bounds while still big, so a ludicrous requirement ("needs 10^20 brokers")
// cannot overflow an int32 on its way into the plan.

const (
	mib = int64(1) << 20
	gib = int64(1) << 30
)

var (
	ratHundred = big.NewRat(100, 1)
	maxInt64   = new(big.Int).SetInt64(math.MaxInt64)
)

// ratOf returns q as an exact rational. It works on a copy: AsDec changes a Quantity's internal
// representation, and the caller's objects may be shared (informer caches).
func ratOf(q resource.Quantity) *big.Rat {
	c := q.DeepCopy()
	d := c.AsDec()
	num := new(big.Int).Set(d.UnscaledBig())
	scale := int64(d.Scale())
	// value = unscaled × 10^-scale
	if scale <= 0 {
		return new(big.Rat).SetInt(num.Mul(num, pow10(-scale)))
	}
	return new(big.Rat).SetFrac(num, pow10(scale))
}

func pow10(n int64) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(n), nil) }

func ratInt(i int64) *big.Rat { return new(big.Rat).SetInt64(i) }

// mul returns the product of its factors as a new Rat.
func mul(first *big.Rat, rest ...*big.Rat) *big.Rat {
	r := new(big.Rat).Set(first)
	for _, f := range rest {
		r.Mul(r, f)
	}
	return r
}

// quo returns a/b as a new Rat; b must not be zero (callers validate divisors first).
func quo(a, b *big.Rat) *big.Rat { return new(big.Rat).Quo(a, b) }

// pct returns x × p / 100.
func pct(x *big.Rat, p int32) *big.Rat { return quo(mul(x, ratInt(int64(p))), ratHundred) }

// floorInt returns ⌊r⌋ as a big.Int.
func floorInt(r *big.Rat) *big.Int {
	// big.Int.Div is Euclidean and a Rat's denominator is positive, so this is the floor even
	// for negative values.
	return new(big.Int).Div(r.Num(), r.Denom())
}

// ceilInt returns ⌈r⌉ as a big.Int.
func ceilInt(r *big.Rat) *big.Int {
	q, m := new(big.Int).DivMod(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// floor64 returns ⌊r⌋ clamped to [0, MaxInt64]: plan figures are non-negative and a figure too
// large for int64 is better reported as the largest int64 than as a wrapped negative number.
func floor64(r *big.Rat) int64 {
	f := floorInt(r)
	switch {
	case f.Sign() < 0:
		return 0
	case f.Cmp(maxInt64) > 0:
		return math.MaxInt64
	}
	return f.Int64()
}

// fitCount picks the smallest count in [lo, hi] that is at least need. When need exceeds hi it
// returns hi and false, so the plan still describes the largest configuration allowed.
func fitCount(need *big.Int, lo, hi int32) (int32, bool) {
	if need.Cmp(big.NewInt(int64(hi))) > 0 {
		return hi, false
	}
	if need.Cmp(big.NewInt(int64(lo))) <= 0 {
		return lo, true
	}
	return int32(need.Int64()), true
}

// countString prints a required count for a message; it may be astronomically large.
func countString(n *big.Int) string { return n.String() }

// rateString prints a byte rate in decimal megabytes per second, the unit link speeds and disk
// bandwidths are quoted in ("90 MB/s", "60.19 MB/s").
func rateString(bytesPerSecond *big.Rat) string {
	return trimZeros(new(big.Rat).Quo(bytesPerSecond, big.NewRat(1_000_000, 1)).FloatString(2)) + " MB/s"
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s
}

// binaryQuantity returns n bytes as a Quantity that prints with the largest exact binary suffix
// ("9830Mi"), which is how people read memory sizes.
func binaryQuantity(n int64) resource.Quantity {
	return *resource.NewQuantity(n, resource.BinarySI)
}

// bytesString prints n bytes the way binaryQuantity does, for messages.
func bytesString(n int64) string {
	q := binaryQuantity(n)
	return q.String()
}
