package plan

import (
	"math/big"
)

// Money.
//
// Prices are decimal strings ("0.216" per GiB-month) and costs are reported as decimal strings
// with two places, because a float cannot represent 0.216 and a bill that is off by a cent in a
// status field invites distrust of every other figure. Costs are computed exactly as rationals
// and rounded once per storage role, half up; totals are sums of the rounded role costs, so the
// figures a user adds up by hand match the total.

// parsePrice parses a validated monthlyPricePerGiB.
func parsePrice(s string) (*big.Rat, bool) {
	return new(big.Rat).SetString(s)
}

// cents is an amount of money in hundredths of a currency unit.
type cents struct{ n *big.Int }

func zeroCents() cents { return cents{new(big.Int)} }

func (c cents) plus(o cents) cents { return cents{new(big.Int).Add(c.n, o.n)} }

// String prints the amount with two places: "8.64", "0.05", "-1.20".
func (c cents) String() string {
	abs := new(big.Int).Abs(c.n)
	units, rest := new(big.Int).QuoRem(abs, big.NewInt(100), new(big.Int))
	s := units.String() + "." + string('0'+byte(rest.Int64()/10)) + string('0'+byte(rest.Int64()%10))
	if c.n.Sign() < 0 {
		return "-" + s
	}
	return s
}

// monthlyCost is size/GiB × replicas × price per GiB-month, rounded to cents. It stays in
// integers until the one rounding division: normalising intermediate rationals (a GCD each
// time) was most of Compute's running time.
func monthlyCost(size *big.Rat, replicas int32, pricePerGiB *big.Rat) cents {
	num := new(big.Int).Mul(size.Num(), pricePerGiB.Num())
	num.Mul(num, big.NewInt(int64(replicas)*100))
	den := new(big.Int).Mul(size.Denom(), pricePerGiB.Denom())
	den.Mul(den, big.NewInt(gib))
	// half up: ⌊(2·num + den) / (2·den)⌋
	num.Lsh(num, 1).Add(num, den)
	den.Lsh(den, 1)
	return cents{num.Div(num, den)}
}
