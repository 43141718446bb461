package api

// sanctionsRoutes serves sanctions screening (/api/sanctions/*, /api/me/sanctions).
func (s *Server) sanctionsRoutes() []Route { return nil }
