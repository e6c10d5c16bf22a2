package mockstorelink

// SetResponseMutator lets tests corrupt the response objects the handlers
// return (operation is the generated Go name, such as "GetInventory"), to
// prove that the mock's response validation catches a broken response. A
// nil f removes the mutator.
func SetResponseMutator(s *Server, f func(operation string, response any) any) {
	if f == nil {
		s.mutate.Store(nil)
		return
	}
	s.mutate.Store(&f)
}
