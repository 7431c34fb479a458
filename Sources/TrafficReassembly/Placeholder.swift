// TrafficReassembly
