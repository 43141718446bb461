package api

// businessRoutes serves /api/business/* (organizations) and the KYC document routes of FIs and merchants.
func (s *Server) businessRoutes() []Route { return nil }
