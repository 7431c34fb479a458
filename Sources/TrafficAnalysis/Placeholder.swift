// TrafficAnalysis
