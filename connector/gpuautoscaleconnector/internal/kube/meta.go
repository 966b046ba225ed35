package kube

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

func metaOf(lc LeaseConfig) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: lc.Name, Namespace: lc.Namespace}
}
