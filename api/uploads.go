package api

// uploadRoutes serves file uploads (/api/uploads).
func (s *Server) uploadRoutes() []Route { return nil }
