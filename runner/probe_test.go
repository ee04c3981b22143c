package runner

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A pass between failures starts the count again: PollLiveness returns after the
// FailureThreshold failures that follow the last pass, and no sooner.
func TestPollLivenessCountsFailuresInARow(t *testing.T) {
	results := []bool{false, false, true, false, false, true}
	for range FailureThreshold {
		results = append(results, false)
	}
	calls := 0
	err := PollLiveness(context.Background(), "svc", nil, time.Millisecond, func(context.Context) (bool, error) {
		calls++
		return results[calls-1], nil
	})
	if err != nil || calls != len(results) {
		t.Errorf("PollLiveness = %v after %d checks, want nil after %d", err, calls, len(results))
	}
}

func TestPollHealthyAndLivenessStopWhenTheAttemptEnds(t *testing.T) {
	done := make(chan struct{})
	close(done)
	never := func(context.Context) (bool, error) { return false, nil }
	if err := PollHealthy(context.Background(), "svc", done, time.Hour, never); !errors.Is(err, ErrAttemptEnded) {
		t.Errorf("PollHealthy = %v, want ErrAttemptEnded", err)
	}
	if err := PollLiveness(context.Background(), "svc", done, time.Hour, never); !errors.Is(err, ErrAttemptEnded) {
		t.Errorf("PollLiveness = %v, want ErrAttemptEnded", err)
	}
	fatal := errors.New("gone")
	if err := PollHealthy(context.Background(), "svc", nil, time.Hour, func(context.Context) (bool, error) { return false, fatal }); err != fatal {
		t.Errorf("PollHealthy of a check that fails for good = %v, want %v", err, fatal)
	}
}
