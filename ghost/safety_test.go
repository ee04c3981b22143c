package ghost

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/ghost/gitexec"
)

func TestSecretsAreFoundByContentToo(t *testing.T) {
	w := newWorld(t)
	write(t, w.sender, "deploy_key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n")
	write(t, w.sender, "conf/settings.ini", "[aws]\naccess_key_id = AKIAIOSFODNN7EXAMPLE\n")
	write(t, w.sender, "notes.txt", "the key is in the usual place; AKIA is a prefix\n")
	write(t, w.sender, ".env", "TOKEN=1\n")
	res, err := Push(context.Background(), PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Diff: true})
	must(t, err)
	got := strings.Join(res.Warnings, "\n")
	for _, want := range []string{"deploy_key holds what looks like a private key", "conf/settings.ini holds what looks like an AWS access key", ".env looks like a secret"} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings %q do not say %q", got, want)
		}
	}
	if strings.Contains(got, "notes.txt") || len(res.Warnings) != 3 {
		t.Errorf("warnings = %q, want exactly the three secrets", res.Warnings)
	}
}

func TestSecretContentPatterns(t *testing.T) {
	for text, want := range map[string]bool{
		"-----BEGIN RSA PRIVATE KEY-----":                                                              true,
		"-----BEGIN PRIVATE KEY-----":                                                                  true,
		"-----BEGIN PGP PRIVATE KEY BLOCK-----":                                                        true,
		`{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nMII`:                 true,
		"aws_access_key_id=ASIAY34FZKBOKMUTVV7A":                                                       true,
		"DefaultEndpointsProtocol=https;AccountName=x;AccountKey=" + strings.Repeat("Ab1+", 22) + "==": true,
		"token: ghp_" + strings.Repeat("a1B2", 9):                                                      true,
		"-----BEGIN PUBLIC KEY-----":                                                                   false,
		"-----BEGIN CERTIFICATE-----":                                                                  false,
		"AKIA-style keys are 20 characters":                                                            false,
	} {
		dir := t.TempDir()
		p := filepath.Join(dir, "f")
		must(t, os.WriteFile(p, []byte(text), 0o644))
		fi, err := os.Lstat(p)
		must(t, err)
		if got := secretReason(p, "f", fi) != ""; got != want {
			t.Errorf("secretReason(%q) = %v, want %v", text, got, want)
		}
	}
}

func TestGhostCommitsCarryTheUsersIdentity(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	for _, v := range []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	ghostDir := strings.TrimPrefix(w.ghostURL, "file://")
	author := func(g *Ghost) string {
		return git(t, w.root, "--git-dir", ghostDir, "log", "-1", "--format=%an <%ae>|%cn <%ce>", g.Commit)
	}
	git(t, w.sender, "config", "user.name", "Ada Lovelace")
	git(t, w.sender, "config", "user.email", "ada@example.com")
	write(t, w.sender, "a.txt", "one\n")
	res, err := Push(ctx, PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Diff: true})
	must(t, err)
	if got := author(res.Diff); got != "Ada Lovelace <ada@example.com>|Ada Lovelace <ada@example.com>" {
		t.Errorf("ghost commit by %q, want the repository's user", got)
	}
	write(t, w.sender, "a.txt", "two\n")
	res, err = Push(ctx, PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Diff: true, Identity: "CI Bot <ci@example.com>"})
	must(t, err)
	if got := author(res.Diff); got != "CI Bot <ci@example.com>|CI Bot <ci@example.com>" {
		t.Errorf("ghost commit by %q, want the --identity", got)
	}
	if _, err := Push(ctx, PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Diff: true, Identity: "no email"}); err == nil || !strings.Contains(err.Error(), "Name <email>") {
		t.Errorf("a malformed identity gave %v", err)
	}
	git(t, w.sender, "config", "--unset", "user.name")
	git(t, w.sender, "config", "--unset", "user.email")
	git(t, w.sender, "config", "user.useConfigOnly", "true") // no guessing from the system
	write(t, w.sender, "a.txt", "three\n")
	res, err = Push(ctx, PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Diff: true})
	must(t, err)
	if got := author(res.Diff); !strings.HasPrefix(got, "jikken ghost <") {
		t.Errorf("without any identity the ghost commit is by %q, want the fallback", got)
	}
}

// TestURLsThatLookLikeOptionsAreRefused: git would take "--upload-pack=cmd" for an option and
// run cmd.
func TestURLsThatLookLikeOptionsAreRefused(t *testing.T) {
	w := newWorld(t)
	marker := filepath.Join(w.root, "ran")
	url := "--upload-pack=touch " + marker
	_, err := List(context.Background(), ListOptions{GhostRepo: url})
	if err == nil || !strings.Contains(err.Error(), "begins with '-'") {
		t.Fatalf("err = %v, want a refusal", err)
	}
	_, err = Pull(context.Background(), PullOptions{Dir: w.sender, GhostRepo: url, Diff: &Selector{Hash: emptyHash}})
	if err == nil {
		t.Fatal("pull from an option-like URL succeeded")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the URL ran a command")
	}
}

// TestSSHConnectTimeout: a host that accepts the connection and never answers makes ssh give
// up after the connect timeout instead of hanging.
func TestSSHConnectTimeout(t *testing.T) {
	if _, err := exec.LookPath("ssh"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but no ssh client; install openssh-client")
		}
		t.Skip("no ssh client (apt-get install openssh-client)")
	}
	isolate(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // silent: no SSH banner ever comes
		}
	}()
	t.Setenv("GIT_SSH_COMMAND", "ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url := "ssh://git@" + l.Addr().String() + "/ghosts.git"
	_, err = List(ctx, ListOptions{GhostRepo: url, RemoteOptions: RemoteOptions{ConnectTimeout: time.Second}})
	if err == nil || errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		t.Fatalf("err = %v, want ssh to give up on its own", err)
	}
	if !strings.Contains(err.Error(), "timed out") {
		t.Errorf("err = %v, want ssh's timeout", err)
	}
}

func TestSSHEnv(t *testing.T) {
	isolate(t)
	ctx := context.Background()
	c := gitexec.Client{Dir: t.TempDir()}
	for _, tc := range []struct {
		url, sshCommand, gitSSH string
		timeout                 time.Duration
		want                    string
	}{
		{url: "git@example.com:me/ghosts.git", want: "GIT_SSH_COMMAND=ssh -o ConnectTimeout=20"},
		{url: "ssh://example.com/ghosts.git", timeout: 1500 * time.Millisecond, want: "GIT_SSH_COMMAND=ssh -o ConnectTimeout=2"},
		{url: "ssh://example.com/ghosts.git", sshCommand: "ssh -i key", want: "GIT_SSH_COMMAND=ssh -i key -o ConnectTimeout=20"},
		{url: "ssh://example.com/ghosts.git", sshCommand: "/usr/bin/ssh", want: "GIT_SSH_COMMAND=/usr/bin/ssh -o ConnectTimeout=20"},
		{url: "ssh://example.com/ghosts.git", sshCommand: "plink -batch"},
		{url: "ssh://example.com/ghosts.git", gitSSH: "/usr/local/bin/my-ssh"},
		{url: "ssh://example.com/ghosts.git", timeout: -1},
		{url: "https://example.com/ghosts.git"},
		{url: "file:///srv/ghosts.git"},
		{url: "/srv/ghosts.git"},
	} {
		t.Setenv("GIT_SSH_COMMAND", tc.sshCommand)
		t.Setenv("GIT_SSH", tc.gitSSH)
		got := strings.Join(sshEnv(ctx, c, tc.url, tc.timeout), " ")
		if got != tc.want {
			t.Errorf("sshEnv(%q, GIT_SSH_COMMAND=%q, GIT_SSH=%q, %v) = %q, want %q", tc.url, tc.sshCommand, tc.gitSSH, tc.timeout, got, tc.want)
		}
	}
}

// TestStaleCacheLocksAreRemoved: a fetch killed while it held a ref lock in the cache does not
// block later fetches of that ghost.
func TestStaleCacheLocksAreRemoved(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	write(t, w.sender, "a.txt", "changed\n")
	res, err := Push(ctx, PushOptions{Dir: w.sender, GhostRepo: w.ghostURL, Diff: true})
	must(t, err)
	t.Setenv(CacheDirEnv, filepath.Join(w.root, "receiver-cache"))
	r, err := openRemote(ctx, w.ghostURL, "ghost", RemoteOptions{})
	must(t, err)
	lock := filepath.Join(r.cache.Dir, filepath.FromSlash(cacheRef(*res.Diff))+".lock")
	must(t, os.MkdirAll(filepath.Dir(lock), 0o755))
	must(t, os.WriteFile(lock, nil, 0o644))
	recv := receiver(t, w, "recv")
	_, err = Pull(ctx, PullOptions{Dir: recv, GhostRepo: w.ghostURL, Diff: &Selector{Hash: res.Diff.Hash}})
	must(t, err)
	if _, err := os.Stat(lock); err == nil {
		t.Error("the stale lock is still there")
	}
}

// TestColdCacheIsSharedSafely: many openers of one cache directory that does not exist yet
// each get a whole repository (git init writes HEAD first and the rest after, so one that only
// waits for HEAD may see half a repository).
func TestColdCacheIsSharedSafely(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	for round := range 5 {
		t.Setenv(CacheDirEnv, filepath.Join(w.root, fmt.Sprintf("cache-%d", round)))
		errs := make(chan error, 16)
		for range 16 {
			go func() {
				r, err := openRemote(ctx, w.ghostURL, "ghost", RemoteOptions{})
				if err == nil {
					_, err = r.readAll(ctx, []string{"refs/ghosts/none"})
				}
				errs <- err
			}()
		}
		for range 16 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
