package docker

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// entry is one entry of a hand-built archive.
type entry struct {
	name, body, link string
	typ              byte
	mode             int64
}

func archive(t *testing.T, entries ...entry) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: mode, Linkname: e.link, Size: int64(len(e.body)),
			ModTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil && h.Size > 0 {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf
}

// An archive as the engine makes it: folders and files (with their executable bits and times)
// are written, a hard link is linked, symbolic links and devices are left out with a note.
func TestExtractOutputs(t *testing.T) {
	dir := t.TempDir()
	skipped, err := extractOutputs(archive(t,
		entry{name: "out/", typ: tar.TypeDir, mode: 0o777},
		entry{name: "out/result.json", typ: tar.TypeReg, body: `{"ok": true}`},
		entry{name: "out/sub/", typ: tar.TypeDir, mode: 0o555},
		entry{name: "out/sub/dir/", typ: tar.TypeDir, mode: 0o755},
		entry{name: "out/sub/dir/file", typ: tar.TypeReg, body: "deep\n", mode: 0o400},
		entry{name: "out/run.sh", typ: tar.TypeReg, body: "#!/bin/sh\n", mode: 0o755},
		entry{name: "out/same", typ: tar.TypeLink, link: "out/result.json"},
		entry{name: "out/no-parent-entry/f", typ: tar.TypeReg, body: "f"},
		entry{name: "out/link", typ: tar.TypeSymlink, link: "/etc/passwd"},
		entry{name: "out/null", typ: tar.TypeChar},
		entry{name: "out/fifo", typ: tar.TypeFifo},
	), dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"result.json": `{"ok": true}`, "sub/dir/file": "deep\n", "run.sh": "#!/bin/sh\n", "same": `{"ok": true}`, "no-parent-entry/f": "f"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		got, err := os.ReadFile(p)
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o600 != 0o600 {
			t.Errorf("%s: %v, %v; want a regular file its owner can read and write", name, fi.Mode(), err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "run.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("run.sh mode %v, %v; want 0755", fi.Mode(), err)
	} else if !fi.ModTime().Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("run.sh modified %v", fi.ModTime())
	}
	if fi, err := os.Stat(filepath.Join(dir, "sub")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("sub mode %v, %v; want 0755 (0555 and the owner's rwx)", fi.Mode(), err)
	}
	for _, name := range []string{"link", "null", "fifo"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s was written (%v)", name, err)
		}
	}
	notes := strings.Join(skipped, "\n")
	for _, want := range []string{"/jikken/out/link, a symbolic link (to /etc/passwd)", "/jikken/out/null, not a file", "/jikken/out/fifo, not a file"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
}

// Entries that would land outside the output folder are refused, and nothing is written there.
func TestExtractOutputsRefusesEscapes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []entry
		want    string
	}{
		{"dot-dot", []entry{{name: "out/", typ: tar.TypeDir}, {name: "../x", typ: tar.TypeReg, body: "x"}}, `refused outputs archive entry "../x"`},
		{"dot-dot inside", []entry{{name: "out/", typ: tar.TypeDir}, {name: "out/../../x", typ: tar.TypeReg, body: "x"}}, `refused outputs archive entry "out/../../x"`},
		{"absolute", []entry{{name: "out/", typ: tar.TypeDir}, {name: "/abs/x", typ: tar.TypeReg, body: "x"}}, `refused outputs archive entry "/abs/x"`},
		{"other folder", []entry{{name: "out/", typ: tar.TypeDir}, {name: "other/x", typ: tar.TypeReg, body: "x"}}, `refused outputs archive entry "other/x"`},
		{"hard link out", []entry{{name: "out/", typ: tar.TypeDir}, {name: "out/h", typ: tar.TypeLink, link: "../x"}}, `refused outputs archive entry "../x"`},
		{"absolute first", []entry{{name: "/", typ: tar.TypeDir}, {name: "/x", typ: tar.TypeReg, body: "x"}}, "/jikken/out is not a folder"},
		{"folder is a symlink", []entry{{name: "out", typ: tar.TypeSymlink, link: "/etc"}}, "/jikken/out is not a folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "a", "out")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			_, err := extractOutputs(archive(t, tc.entries...), dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
			for _, p := range []string{filepath.Join(parent, "a", "x"), filepath.Join(parent, "x"), filepath.Join(dir, "x"), filepath.Join(dir, "h")} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s was written", p)
				}
			}
		})
	}
}

// The input archive holds an empty output folder open to any user, after a file of the same
// name that makes the engine drop what the folder held, and params.json when there are params.
func TestInputArchive(t *testing.T) {
	for _, hasParams := range []bool{true, false} {
		b, err := inputArchive([]byte(`{"x": 1}`), hasParams)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		tr := tar.NewReader(bytes.NewReader(b))
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			got = append(got, h.Name+" "+string(h.Typeflag)+" "+os.FileMode(h.Mode).String())
		}
		want := []string{"jikken/ 5 -rwxr-xr-x", "jikken/out 0 -rw-r--r--", "jikken/out/ 5 -rwxrwxrwx"}
		if hasParams {
			want = append(want, "jikken/params.json 0 -rw-r--r--")
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("params %v: entries\n%s\nwant\n%s", hasParams, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
