module example.com/statusboard

go 1.19
