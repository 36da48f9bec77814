"""What Kubernetes itself does to built-in objects: kube-apiserver's refusals, known fields, Pod defaulting
and validation, LimitRanger, ResourceQuota, PriorityClass and RuntimeClass admission; the controller-
manager's DaemonSet and ReplicationController rules; the kubelet's pod termination and CrashLoopBackOff."""
