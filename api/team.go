package api

// teamRoutes serves team-member management of businesses, FIs and merchants, and the platform's business admin routes.
func (s *Server) teamRoutes() []Route { return nil }
