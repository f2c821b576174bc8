module example.com/uptime

go 1.19
