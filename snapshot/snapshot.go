package snapshot

import (
	"fmt"
	"time"
)

// Snapshot is the exact state of a repository's working tree at one moment. It is plain data:
// store it as JSON (in a run manifest) and hand it to ghost.Materialize later.
type Snapshot struct {
	Repo   string `json:"repo"`             // top level of the repository it was taken in
	Origin string `json:"origin,omitempty"` // URL of that repository's remote
	// Head is the commit checked out; Base is the commit on a remote that Head builds on
	// (equal to Head when nothing is unpushed; empty when no remote has any of its history).
	Head   string `json:"head"`
	Base   string `json:"base,omitempty"`
	Branch string `json:"branch,omitempty"`
	Dirty  bool   `json:"dirty"`
	// Tree and Index are the tree objects of the working tree (tracked and untracked, not
	// ignored) and of the index.
	Tree  string `json:"tree"`
	Index string `json:"index"`
	// Commit is a commit holding the state (Head itself when clean), kept alive by Ref in Repo.
	Commit string `json:"commit"`
	Ref    string `json:"ref,omitempty"`
	// GhostRepo, Commits and Diff say where the state was pushed, when it was.
	GhostRepo string   `json:"ghost_repo,omitempty"`
	Commits   *Ghost   `json:"commits,omitempty"`
	Diff      *Ghost   `json:"diff,omitempty"`
	Files     []string `json:"files"`
	Warnings  []string `json:"warnings,omitempty"`
}

// Kind says what a ghost carries.
type Kind string

const (
	// KindDiff is a patch from a base commit to a working state: branch
	// <prefix>/<base>/<sha1 of the patch>, file local-mod.patch (git-ghost's "diff branch").
	KindDiff Kind = "diff"
	// KindCommits is a range of local commits: branch <prefix>/<from>-<to>, file commits.patch
	// (git-ghost's "commits branch"); jikken adds the commit objects themselves as commits.pack.
	KindCommits Kind = "commits"
)

// Ghost names one ghost branch in a ghost repository.
type Ghost struct {
	Kind   Kind   `json:"kind"`
	Prefix string `json:"prefix"`
	// From is the base commit: the commit a diff applies to, or the commit a range starts after.
	From string `json:"from"`
	// To is the last commit of a commits ghost.
	To string `json:"to,omitempty"`
	// Hash is the SHA-1 of a diff ghost's patch.
	Hash string `json:"hash,omitempty"`
	// Commit is the ghost commit the branch points at, when known.
	Commit string `json:"commit,omitempty"`
	// Time is when the ghost was written (metadata, else the ghost commit's date); zero until
	// the ghost is fetched.
	Time time.Time `json:"time,omitzero"`
	// Meta is what jikken recorded when it pushed the ghost; nil for ghosts written by git-ghost
	// or when it was not fetched.
	Meta *Meta `json:"meta,omitempty"`
}

// Branch returns the ghost's branch name without refs/heads/.
func (g Ghost) Branch() string {
	if g.Kind == KindCommits {
		return fmt.Sprintf("%s/%s-%s", g.Prefix, g.From, g.To)
	}
	return fmt.Sprintf("%s/%s/%s", g.Prefix, g.From, g.Hash)
}

// Ref returns the ghost's full ref name.
func (g Ghost) Ref() string { return "refs/heads/" + g.Branch() }

// ID returns the pair git-ghost prints for the ghost: "<from> <to>" or "<from> <hash>".
func (g Ghost) ID() string {
	if g.Kind == KindCommits {
		return g.From + " " + g.To
	}
	return g.From + " " + g.Hash
}

// Meta is what jikken records in the message of every ghost commit it writes, so ghost's list
// can filter and sort and its pull can check it rebuilt exactly the state that was pushed. git-ghost's
// own ghosts have no Meta.
type Meta struct {
	Version int       `json:"version"`
	Kind    Kind      `json:"kind"`
	Repo    string    `json:"repo,omitempty"`   // URL of the source repository's remote
	Branch  string    `json:"branch,omitempty"` // the branch checked out when pushing
	User    string    `json:"user,omitempty"`
	Host    string    `json:"host,omitempty"`
	Time    time.Time `json:"time"`
	// Tree and Index are the tree object names of the pushed working tree (tracked and
	// untracked, not ignored) and of the index; a receiver compares what it rebuilt with them.
	Tree  string `json:"tree,omitempty"`
	Index string `json:"index,omitempty"`
	// Files lists the paths the ghost changes, relative to the repository root.
	Files []string `json:"files,omitempty"`
}
