// Package checkpoint keeps a trial's checkpoint folder ($JIKKEN_CHECKPOINT_DIR) across its
// attempts: on the runner's host as a folder that outlives them (Folder), and in a run's store as
// versions that an executor next to the trial uploads and restores (Save, Latest, Restore).
//
// A stored version is its files under a prefix of their own and a small manifest naming them,
// written last: a version whose upload was cut short has no manifest, so it is never restored,
// and the newest complete one stays the newest. Files that did not change since the version
// before are not uploaded again: the manifest points at the copy that version holds.
package checkpoint
