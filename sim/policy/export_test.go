package policy

// SetExhaustive turns a policy's shortcuts off: no skipped passes, and ordered policies sort
// their whole queue every pass.
func SetExhaustive(s any) {
	switch p := s.(type) {
	case *ordered:
		p.exhaustive = true
	case *fifo:
		p.exhaustive = true
	case *drf:
		p.exhaustive = true
	}
}
