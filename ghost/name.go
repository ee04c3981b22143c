package ghost

import (
	"fmt"
	"strings"
)

// File names inside a ghost commit. The first two are git-ghost's; the others are jikken's
// additions, which git-ghost ignores.
const (
	diffFile      = "local-mod.patch"
	commitsFile   = "commits.patch"
	indexFile     = "index.patch"
	commitsPack   = "commits.pack"
	ghostSubject  = "Create ghost commit"
	branchRefRoot = "refs/heads/"
)

// ParseBranch reads a branch name (with or without refs/heads/) written under prefix. Unlike
// git-ghost, which only recognises prefixes of [a-z0-9], any prefix that is a valid ref
// component path works, because the prefix is stripped literally before the hashes are parsed.
func ParseBranch(prefix, name string) (Ghost, bool) {
	name = strings.TrimPrefix(name, branchRefRoot)
	prefix = strings.Trim(prefix, "/")
	if prefix == "" {
		return Ghost{}, false
	}
	rest, ok := strings.CutPrefix(name, prefix+"/")
	if !ok {
		return Ghost{}, false
	}
	if from, hash, ok := strings.Cut(rest, "/"); ok {
		if isObjectName(from) && isObjectName(hash) {
			return Ghost{Kind: KindDiff, Prefix: prefix, From: from, Hash: hash}, true
		}
		return Ghost{}, false
	}
	if from, to, ok := strings.Cut(rest, "-"); ok && isObjectName(from) && isObjectName(to) {
		return Ghost{Kind: KindCommits, Prefix: prefix, From: from, To: to}, true
	}
	return Ghost{}, false
}

// isObjectName reports whether s is a full lower-case SHA-1 or SHA-256 object name.
func isObjectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return isHex(s)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return s != ""
}

// CheckPrefix returns an error when prefix cannot be used as the leading part of a branch name.
func CheckPrefix(prefix string) error {
	p := strings.Trim(prefix, "/")
	if p == "" {
		return fmt.Errorf("ghost prefix %q is empty; pass --ghost-prefix with a name such as ghost", prefix)
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." || strings.HasPrefix(part, ".") ||
			strings.HasSuffix(part, ".lock") || strings.ContainsAny(part, " ~^:?*[\\\x7f") ||
			strings.Contains(part, "..") || strings.Contains(part, "@{") || hasControl(part) {
			return fmt.Errorf("ghost prefix %q is not a valid branch name part; use letters, digits, '-', '_' and '/'", prefix)
		}
	}
	return nil
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 {
			return true
		}
	}
	return false
}
