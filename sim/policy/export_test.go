package policy

// SetExhaustive makes an ordered policy sort its whole queue every pass.
func SetExhaustive(s any) {
	if o, ok := s.(*ordered); ok {
		o.exhaustive = true
	}
}
