// TrafficOutput
