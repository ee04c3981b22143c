package ghost

import (
	"strings"
	"testing"
	"time"
)

var (
	sha1A = strings.Repeat("a", 40)
	sha1B = strings.Repeat("b", 40)
	sha2C = strings.Repeat("c", 64)
)

func TestParseBranch(t *testing.T) {
	tests := []struct {
		prefix, name string
		want         Ghost
		ok           bool
	}{
		{"ghost", "refs/heads/ghost/" + sha1A + "/" + sha1B, Ghost{Kind: KindDiff, Prefix: "ghost", From: sha1A, Hash: sha1B}, true},
		{"ghost", "ghost/" + sha1A + "-" + sha1B, Ghost{Kind: KindCommits, Prefix: "ghost", From: sha1A, To: sha1B}, true},
		// Prefixes git-ghost cannot list: with a dash, with slashes, with upper case.
		{"my-team", "my-team/" + sha1A + "/" + sha1B, Ghost{Kind: KindDiff, Prefix: "my-team", From: sha1A, Hash: sha1B}, true},
		{"team/alice", "team/alice/" + sha1A + "-" + sha1B, Ghost{Kind: KindCommits, Prefix: "team/alice", From: sha1A, To: sha1B}, true},
		{"/Ghost/", "Ghost/" + sha1A + "/" + sha1B, Ghost{Kind: KindDiff, Prefix: "Ghost", From: sha1A, Hash: sha1B}, true},
		{"ghost", "ghost/" + sha2C + "/" + sha2C, Ghost{Kind: KindDiff, Prefix: "ghost", From: sha2C, Hash: sha2C}, true},
		{"ghost", "ghost/" + sha1A[:39] + "/" + sha1B, Ghost{}, false},
		{"ghost", "ghost/" + strings.ToUpper(sha1A) + "/" + sha1B, Ghost{}, false},
		{"ghost", "other/" + sha1A + "/" + sha1B, Ghost{}, false},
		{"ghost", "ghost/" + sha1A + "/" + sha1B + "/x", Ghost{}, false},
		{"ghost", "ghost/team/" + sha1A + "/" + sha1B, Ghost{}, false},
		{"", sha1A + "/" + sha1B, Ghost{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseBranch(tt.prefix, tt.name)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ParseBranch(%q, %q) = %+v, %v; want %+v, %v", tt.prefix, tt.name, got, ok, tt.want, tt.ok)
		}
		if ok && got.Ref() != "refs/heads/"+strings.TrimPrefix(tt.name, "refs/heads/") {
			t.Errorf("Ref() = %q does not give back %q", got.Ref(), tt.name)
		}
	}
}

func TestCheckPrefix(t *testing.T) {
	for _, p := range []string{"ghost", "my-team", "team/alice", "a_b.c"} {
		if err := CheckPrefix(p); err != nil {
			t.Errorf("CheckPrefix(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"", "/", "a..b", "a b", "a/.hidden", "x.lock", "a:b", "a//b"} {
		if err := CheckPrefix(p); err == nil {
			t.Errorf("CheckPrefix(%q) accepted an invalid prefix", p)
		}
	}
}

func TestMessageRoundTrip(t *testing.T) {
	m := Meta{Version: 1, Kind: KindDiff, Repo: "git@example.com:a/b.git", Branch: "main", User: "alice", Host: "box",
		Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Tree: sha1A, Index: sha1B, Files: []string{"a.txt", "dir/b c.txt"}}
	msg, err := FormatMessage(m)
	must(t, err)
	if !strings.HasPrefix(msg, "Create ghost commit\n\n") {
		t.Errorf("message %q does not start with git-ghost's subject", msg)
	}
	got, ok, err := ParseMessage(msg)
	if err != nil || !ok {
		t.Fatalf("ParseMessage = %v, %v", ok, err)
	}
	if got.Time != m.Time || got.User != m.User || got.Tree != m.Tree || len(got.Files) != 2 || got.Files[1] != "dir/b c.txt" {
		t.Errorf("round trip = %+v, want %+v", got, m)
	}
	for _, plain := range []string{"Create ghost commit\n", "Create ghost commit", "", "x\n\nnot json"} {
		if _, ok, err := ParseMessage(plain); ok || err != nil {
			t.Errorf("ParseMessage(%q) = %v, %v; want no metadata and no error", plain, ok, err)
		}
	}
	if _, _, err := ParseMessage("Create ghost commit\n\n{\"version\": \"x\"}"); err == nil {
		t.Error("bad metadata was accepted")
	}
}

func FuzzParseBranch(f *testing.F) {
	f.Add("ghost", "refs/heads/ghost/"+sha1A+"/"+sha1B)
	f.Add("my-team", "my-team/"+sha1A+"-"+sha1B)
	f.Add("a/b", "a/b/"+sha2C+"/"+sha2C)
	f.Add("", "/")
	f.Fuzz(func(t *testing.T, prefix, name string) {
		g, ok := ParseBranch(prefix, name)
		if !ok {
			return
		}
		if !isObjectName(g.From) || (g.Kind == KindDiff) == (g.Hash == "") || (g.Kind == KindCommits) == (g.To == "") {
			t.Fatalf("ParseBranch(%q, %q) = %+v: malformed ghost", prefix, name, g)
		}
		// What parses formats back to the same name and parses again to the same ghost.
		if g.Branch() != strings.TrimPrefix(name, "refs/heads/") {
			t.Fatalf("Branch() = %q, want %q", g.Branch(), name)
		}
		again, ok := ParseBranch(g.Prefix, g.Ref())
		if !ok || again != g {
			t.Fatalf("reparse = %+v, %v; want %+v", again, ok, g)
		}
	})
}

func FuzzParseMessage(f *testing.F) {
	msg, _ := FormatMessage(Meta{Version: 1, Kind: KindCommits, User: "u", Time: time.Unix(0, 0).UTC(), Files: []string{"x"}})
	f.Add(msg)
	f.Add("Create ghost commit\n")
	f.Add("a\n\n{")
	f.Add("a\n\n{\"version\":1,\"time\":\"bad\"}")
	f.Fuzz(func(t *testing.T, msg string) {
		m, ok, err := ParseMessage(msg)
		if err != nil && ok {
			t.Fatal("ok with an error")
		}
		if !ok {
			return
		}
		out, err := FormatMessage(m)
		if err != nil {
			t.Fatalf("FormatMessage of parsed metadata: %v", err)
		}
		back, ok, err := ParseMessage(out)
		if err != nil || !ok || back.Version != m.Version || back.User != m.User || !back.Time.Equal(m.Time) {
			t.Fatalf("round trip of %q: %+v, %v, %v", msg, back, ok, err)
		}
	})
}
