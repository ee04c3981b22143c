// Package storecmd is the `jikken store` command group: moving runs between stores.
package storecmd
