package progress

import (
	"bytes"
	"testing"
	"time"
)

func TestLineOnATerminal(t *testing.T) {
	var b bytes.Buffer
	l := New(&b, true)
	l.DrawNow("1/3")
	l.Draw("2/3") // within Every: skipped
	l.Println("FAILED x")
	l.Done("3/3")
	if got, want := b.String(), "\r\033[K1/3\r\033[KFAILED x\n\r\033[K3/3\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestLineElsewhereOnlyPrintsLines(t *testing.T) {
	var b bytes.Buffer
	l := New(&b, false)
	l.DrawNow("1/3")
	l.Println("FAILED x")
	l.Done("3/3")
	if got := b.String(); got != "FAILED x\n" {
		t.Fatalf("got %q", got)
	}
}

func TestBarClockETA(t *testing.T) {
	for _, c := range []struct {
		done, total, width int
		want               string
	}{{0, 10, 10, "[          ]"}, {5, 10, 10, "[=====     ]"}, {12, 10, 10, "[==========]"}, {1, 2, 9, ""}, {1, 0, 20, ""}, {1, 2, 100, "[" + "====================" + "                    ]"}} {
		if got := Bar(c.done, c.total, c.width); got != c.want {
			t.Errorf("Bar(%d, %d, %d) = %q, want %q", c.done, c.total, c.width, got, c.want)
		}
	}
	if got := Clock(3725 * time.Second); got != "1:02:05" {
		t.Errorf("Clock = %q", got)
	}
	if got := ETA(1, 4, 10*time.Second); got != "00:30" {
		t.Errorf("ETA = %q", got)
	}
	if got := ETA(0, 4, time.Second); got != "--:--" {
		t.Errorf("ETA = %q", got)
	}
}
