package version

import (
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Info is the provenance of a jikken binary.
type Info struct {
	// Version is the main module's version: a release tag (v1.2.0), a pseudo-version the go
	// command derives from the commit (v0.0.0-20261124101500-3c67697abcde), or "(devel)" when
	// the build carried no version (go test, -buildvcs=false, a source tree without git).
	Version string `json:"version"`
	// Revision is the full VCS commit the binary was built from, when known.
	Revision string `json:"revision,omitempty"`
	// Time is the commit's time (RFC 3339), when known.
	Time string `json:"time,omitempty"`
	// Modified is true when the working tree had uncommitted changes at build time: the
	// binary is then not reproducible from Revision alone.
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// Devel is the version of a build that carried none.
const Devel = "(devel)"

var (
	once   sync.Once
	cached Info
)

// Get returns the running binary's Info.
func Get() Info {
	once.Do(func() {
		bi, ok := debug.ReadBuildInfo()
		cached = FromBuildInfo(bi, ok)
	})
	return cached
}

// String returns the running binary's version in one line (see Info.String).
func String() string { return Get().String() }

// FromBuildInfo reads Info from what debug.ReadBuildInfo returned.
func FromBuildInfo(bi *debug.BuildInfo, ok bool) Info {
	in := Info{Version: Devel, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if !ok || bi == nil {
		return in
	}
	if bi.GoVersion != "" {
		in.Go = bi.GoVersion
	}
	if v := bi.Main.Version; v != "" {
		in.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	// The go command marks a pseudo-version of a modified tree with +dirty; so does Modified.
	if strings.HasSuffix(in.Version, "+dirty") {
		in.Modified = true
	}
	return in
}

// String renders the version and the commit: "v1.2.0 (3c67697abcde)", or with uncommitted
// changes "v0.0.0-20261124101500-3c67697abcde (3c67697abcde-dirty)". A build without VCS
// information is "(devel)".
func (in Info) String() string {
	v := strings.TrimSuffix(in.Version, "+dirty")
	if in.Revision == "" {
		if in.Modified {
			return v + " (dirty)"
		}
		return v
	}
	rev := in.Revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if in.Modified {
		rev += "-dirty"
	}
	return v + " (" + rev + ")"
}

// ImageTag is the tag of the executor image of this version (a container image tag allows
// letters, digits, '_', '.' and '-'): the version itself for a release or a clean commit; a
// development build gets a tag no published image has, so it must be given an image.
func (in Info) ImageTag() string {
	v := in.Version
	if v == Devel {
		v = "devel"
	}
	v = strings.NewReplacer("+", "-").Replace(v)
	if in.Modified && !strings.HasSuffix(v, "-dirty") {
		v += "-dirty"
	}
	return v
}

// Published reports whether an executor image of this version can exist: the build has a
// version and no uncommitted changes.
func (in Info) Published() bool { return in.Version != Devel && !in.Modified }
