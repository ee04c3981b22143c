package cli

import _ "github.com/jikken-dev/jikken/store/s3" // registers s3:// with store.Open
