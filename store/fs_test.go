package store_test

import (
	"testing"

	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/store/storetest"
)

func TestFolderConformance(t *testing.T) {
	f, err := store.OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	storetest.Run(t, f)
}
