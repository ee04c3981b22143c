// Package ghost captures and reproduces the exact state of a git working tree — local commits,
// staged and unstaged changes, untracked files — through a "ghost" git repository, in the
// branch layout of Preferred Networks' git-ghost.
//
// # Ghost repository layout
//
// Every ghost is a branch holding one parentless commit:
//
//	<prefix>/<base>/<diff-hash>   file local-mod.patch: `git diff --binary` from base to the
//	                              working tree; diff-hash is the SHA-1 of that file
//	<prefix>/<from>-<to>          file commits.patch: the commits from..to as a mailbox
//
// These are git-ghost's names and files, so either tool reads the other's ghosts. jikken adds
// files git-ghost ignores: index.patch (base to the index, so staging survives),
// commits.pack (the commit objects, so a receiver gets the same commit hashes without git am),
// and JSON metadata in the commit message (source URL, branch, user, host, time, trees, files;
// see Meta). Operations never clone the ghost repository: they read its refs with ls-remote and
// fetch single ghost branches into a local cache repository (see CacheDirEnv), which any number
// of processes share safely (flock around init and fetch).
//
// # Pushing and pulling
//
// Push captures the working tree through a temporary index (the user's index is not touched),
// including untracked files that are not ignored. Pull always works at the repository's top
// level, refuses a working tree with changes unless forced, refuses when HEAD is not the ghost's
// base and says what to check out, rebuilds the target trees in a temporary index first (so a
// patch that does not apply changes nothing), and does nothing when the repository already is
// in the ghost's state. It then switches the working tree, the index and HEAD through a journal
// (see switch.go), so a killed pull leaves the old state or, once the next command has finished
// it, the new one. Revision arguments resolve as git-ghost resolves them: a name the repository
// knows (HEAD, a branch, a tag) is its commit, anything else a hash prefix.
//
// # Snapshots for runs
//
// Take and Materialize are what the experiment runner uses:
//
//	snap, err := ghost.Take(ctx, repoDir, ghost.SnapshotOptions{GhostRepo: url})
//	// store snap (JSON) in the run manifest ...
//	err = ghost.Materialize(ctx, snap, trialDir) // exact copy of the state for a trial
//	defer ghost.Release(ctx, snap, trialDir)
//
// Take stores the state as commits under refs/jikken/snapshots/ in the repository itself (like
// git stash: a working-tree commit whose parents are HEAD and an index commit), so Materialize
// works on the same machine with no ghost repository; with GhostRepo set it also pushes the
// local commits and the working state as ghosts, and Materialize on another machine clones
// Snapshot.Origin and pulls them. Materialize on the same machine adds a detached git worktree,
// so a trial runs on the recorded state while the researcher keeps editing.
package ghost
