// TrafficHTTP
