package mockstorelink

// SetResponseMutator lets tests corrupt handler responses by operation's
// Go name; nil f removes it.
func SetResponseMutator(s *Server, f func(operation string, response any) any) {
	if f == nil {
		s.mutate.Store(nil)
		return
	}
	s.mutate.Store(&f)
}
