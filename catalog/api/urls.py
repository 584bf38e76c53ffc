from rest_framework.routers import DefaultRouter

from . import views

router = DefaultRouter(trailing_slash=True)
router.register("gpus", views.GPUViewSet, basename="gpu")
router.register("interconnects", views.InterconnectViewSet, basename="interconnect")
router.register("providers", views.ProviderViewSet, basename="provider")
router.register("regions", views.RegionViewSet, basename="region")
router.register("instance-types", views.InstanceTypeViewSet, basename="instance-type")
router.register("prices/history", views.PriceHistoryViewSet, basename="price-history")
router.register("prices", views.PriceViewSet, basename="price")
router.register("scrape-runs", views.ScrapeRunViewSet, basename="scrape-run")

urlpatterns = router.urls
