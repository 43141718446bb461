package api

// catalogRoutes serves the compensation catalogs (departments, positions, employment types, payment frequencies, allowances, deductions).
func (s *Server) catalogRoutes() []Route { return nil }
