module example.com/mirror

go 1.19
