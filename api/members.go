package api

// memberRoutes serves /api/members/*.
func (s *Server) memberRoutes() []Route { return nil }
