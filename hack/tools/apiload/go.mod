module kubelet-ts/hack/tools/apiload

go 1.26
