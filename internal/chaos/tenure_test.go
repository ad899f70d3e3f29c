package chaos

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// lease is a successful Lease write by replica naming holder, sent at s and answered 10 ms later.
func lease(replica, holder string, s float64) Write {
	return Write{Replica: replica, At: at(s), Done: at(s + 0.01), Method: "PUT", Path: "/apis/coordination.k8s.io/v1/namespaces/strata-system/leases/strata.strata.dev",
		Status: 200, Lease: true, Holder: holder}
}

func work(replica string, s float64) Write {
	return Write{Replica: replica, At: at(s), Done: at(s + 0.01), Method: "PATCH", Path: "/api/v1/persistentvolumes/pv-1", Status: 200}
}

func event(replica string, s float64) Write {
	return Write{Replica: replica, At: at(s), Done: at(s + 0.01), Method: "POST", Path: "/api/v1/namespaces/strata-system/events", Status: 201, Event: true}
}

func TestOverlaps(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []Write
		want   []string // a substring of each violation, in order
	}{
		{"one leader, renewing", []Write{lease("a", "a-id", 0), work("a", 1), lease("a", "a-id", 2), work("a", 3)}, nil},
		{"a clean failover", []Write{lease("a", "a-id", 0), work("a", 1), lease("b", "b-id", 20), work("b", 21)}, nil},
		{"a standby writes", []Write{lease("a", "a-id", 0), work("b", 1)}, []string{"b wrote PATCH /api/v1/persistentvolumes/pv-1 (answer 200) at 12:00:01.000, outside its tenures (never the leader)"}},
		{"the deposed leader writes after the takeover", []Write{lease("a", "a-id", 0), lease("b", "b-id", 20), work("b", 21), work("a", 22)},
			[]string{"a wrote PATCH /api/v1/persistentvolumes/pv-1 (answer 200) at 12:00:22.000"}},
		{"a write sent before the takeover was answered is the old leader's", []Write{lease("a", "a-id", 0), lease("b", "b-id", 20), work("a", 20.005)}, nil},
		{"events and lease attempts are not work", []Write{lease("a", "a-id", 0), lease("b", "b-id", 20), event("a", 25),
			{Replica: "a", At: at(26), Done: at(26.01), Lease: true, Status: 409}}, nil},
		{"a failed write of a deposed leader still counts", []Write{lease("a", "a-id", 0), lease("b", "b-id", 20), {Replica: "a", At: at(22), Done: at(22.01), Method: "POST", Path: "/api/v1/namespaces/x/pods", Status: 409}},
			[]string{"a wrote POST /api/v1/namespaces/x/pods (answer 409)"}},
		{"leadership back to a restarted replica's new identity", []Write{lease("a", "a-id", 0), lease("b", "b-id", 20), lease("a", "a-id2", 40), work("a", 41), work("b", 39)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Overlaps(tc.writes)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d violations, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("violation %d: %q, want it to contain %q", i, got[i], w)
				}
			}
		})
	}
}

func TestMeasureFailover(t *testing.T) {
	writes := []Write{lease("a", "a-id", 0), lease("a", "a-id", 2), work("a", 3), lease("a", "a-id", 4)}
	if _, err := MeasureFailover(writes, "a", at(5), 15*time.Second); !errors.Is(err, errNotYet) {
		t.Fatalf("before the takeover: %v, want errNotYet", err)
	}
	writes = append(writes, Write{Replica: "b", At: at(19.5), Done: at(19.6), Lease: true, Status: 409}, lease("b", "b-id", 21.2))
	if _, err := MeasureFailover(writes, "a", at(5), 15*time.Second); !errors.Is(err, errNotYet) {
		t.Fatalf("before the new leader's first write: %v, want errNotYet", err)
	}
	writes = append(writes, event("b", 21.3), work("b", 21.7), work("b", 22))
	f, err := MeasureFailover(writes, "a", at(5), 15*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if f.New != "b" || !f.LastRenew.Equal(at(4.01)) || !f.Expiry.Equal(at(19.01)) || !f.Acquired.Equal(at(21.21)) || !f.FirstWork.Equal(at(21.7)) {
		t.Fatalf("measured %+v", f)
	}
	if d := f.ExpiryToAcquired(); d != 2200*time.Millisecond {
		t.Errorf("expiry to acquired %s, want 2.2s", d)
	}
	if d := f.AcquiredToWork(); d != 490*time.Millisecond {
		t.Errorf("acquired to work %s, want 490ms", d)
	}
	if d := f.LostToWork(); d != 16700*time.Millisecond {
		t.Errorf("lost to work %s, want 16.7s", d)
	}
	if _, err := MeasureFailover(writes, "c", at(5), 15*time.Second); err == nil || errors.Is(err, errNotYet) {
		t.Errorf("a replica that never renewed: %v, want an error other than errNotYet", err)
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3}
	if p := percentile(ds, 50); p != 3 {
		t.Errorf("p50 %d, want 3", p)
	}
	if p := percentile(ds, 99); p != 5 {
		t.Errorf("p99 %d, want 5", p)
	}
	if p := percentile(nil, 50); p != 0 {
		t.Errorf("p50 of nothing %d, want 0", p)
	}
}
