module github.com/submetrics/submetrics/clients/go

go 1.19
